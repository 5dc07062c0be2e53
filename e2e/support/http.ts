/** GET http://127.0.0.1:port/path -> status and body. */
export async function httpGet(port: number, path: string): Promise<{ status: number; body: string }> {
  const response = await fetch(`http://127.0.0.1:${port}${path}`, { signal: AbortSignal.timeout(10_000) });
  return { status: response.status, body: await response.text() };
}
