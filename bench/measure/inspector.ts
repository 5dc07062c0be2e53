import { writeFileSync } from 'node:fs';

/**
 * The live heap of a Node process after a full garbage collection, through the inspector protocol:
 * the process is started with `--inspect-port=127.0.0.1:PORT` (which opens nothing), SIGUSR1 opens
 * the inspector on that port, and Chrome DevTools Protocol commands collect the garbage and read the
 * heap. So retained memory is told apart from V8's slack without a flag that changes the run.
 */
export interface HeapAfterGc {
  /** Bytes of live JavaScript objects after the collection. */
  usedBytes: number;
  /** Bytes V8 holds for the JavaScript heap at that moment (used plus slack). */
  totalBytes: number;
}

interface InspectorTarget {
  webSocketDebuggerUrl: string;
}

export async function heapAfterGc(pid: number, port: number, snapshotFile?: string): Promise<HeapAfterGc> {
  process.kill(pid, 'SIGUSR1');
  const url = await debuggerUrl(port);
  const session = await InspectorSession.open(url);
  try {
    await session.send('HeapProfiler.enable');
    await session.send('HeapProfiler.collectGarbage');
    const usage = await session.send<{ usedSize: number; totalSize: number }>('Runtime.getHeapUsage');
    if (snapshotFile) await session.snapshot(snapshotFile);
    return { usedBytes: usage.usedSize, totalBytes: usage.totalSize };
  } finally {
    session.close();
  }
}

async function debuggerUrl(port: number): Promise<string> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    try {
      const targets = (await (await fetch(`http://127.0.0.1:${port}/json/list`)).json()) as InspectorTarget[];
      const url = targets[0]?.webSocketDebuggerUrl;
      if (url) return url;
    } catch (err) {
      if (Date.now() > deadline)
        throw new Error(`no inspector on port ${port} after SIGUSR1: ${String(err)}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Just enough of the Chrome DevTools Protocol: commands with replies, and snapshot chunks. */
class InspectorSession {
  private nextId = 1;
  private readonly pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  private chunks: string[] | undefined;
  private readonly socket: WebSocket;

  private constructor(socket: WebSocket) {
    this.socket = socket;
    socket.addEventListener('message', (event) => {
      const message = JSON.parse(String(event.data)) as {
        id?: number;
        result?: unknown;
        error?: { message: string };
        method?: string;
        params?: { chunk?: string };
      };
      if (message.method === 'HeapProfiler.addHeapSnapshotChunk')
        this.chunks?.push(message.params?.chunk ?? '');
      if (message.id === undefined) return;
      const waiter = this.pending.get(message.id);
      this.pending.delete(message.id);
      if (message.error) waiter?.reject(new Error(message.error.message));
      else waiter?.resolve(message.result);
    });
  }

  static open(url: string): Promise<InspectorSession> {
    return new Promise((resolve, reject) => {
      const socket = new WebSocket(url);
      socket.addEventListener('open', () => resolve(new InspectorSession(socket)), { once: true });
      socket.addEventListener('error', () => reject(new Error(`cannot open ${url}`)), { once: true });
    });
  }

  send<T = unknown>(method: string, params: Record<string, unknown> = {}): Promise<T> {
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      this.pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
      this.socket.send(JSON.stringify({ id, method, params }));
    });
  }

  async snapshot(file: string): Promise<void> {
    this.chunks = [];
    await this.send('HeapProfiler.takeHeapSnapshot', { reportProgress: false });
    writeFileSync(file, this.chunks.join(''));
    this.chunks = undefined;
  }

  close(): void {
    this.socket.close();
  }
}
