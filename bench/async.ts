export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Calls `fn` on every item, `concurrency` calls at a time. */
export async function parallel<T>(
  items: T[],
  concurrency: number,
  fn: (item: T) => Promise<unknown>,
): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < items.length) await fn(items[next++]!);
    }),
  );
}
