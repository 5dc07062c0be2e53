const NEWLINE = 0x0a;

/**
 * Parses a stream of newline-separated JSON documents (a watch response) as it arrives. Lines are
 * found and decoded in the bytes: a line may span chunks and a chunk may hold many lines, and only a
 * line that spans chunks is copied. (Appending decoded chunks to a string and searching it copies the
 * whole pending text on every chunk: 7.5% of the operator's allocations at 10,000 pods.)
 */
export async function* jsonLines<T>(chunks: AsyncIterable<Uint8Array>): AsyncGenerator<T> {
  let head: Buffer[] = [];
  for await (const raw of chunks) {
    const chunk = Buffer.isBuffer(raw) ? raw : Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength);
    let start = 0;
    for (let end = chunk.indexOf(NEWLINE); end >= 0; end = chunk.indexOf(NEWLINE, start)) {
      const tail = chunk.subarray(start, end);
      const line = head.length === 0 ? tail : Buffer.concat([...head, tail]);
      head = [];
      start = end + 1;
      const value = parseLine<T>(line);
      if (value !== undefined) yield value;
    }
    if (start < chunk.length) head.push(chunk.subarray(start));
  }
  const value = parseLine<T>(Buffer.concat(head));
  if (value !== undefined) yield value;
}

function parseLine<T>(line: Buffer): T | undefined {
  const text = line.toString('utf8');
  return text.trim() === '' ? undefined : (JSON.parse(text) as T);
}
