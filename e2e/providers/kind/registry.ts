/**
 * Whether the public registries kind and the Dockerfile pull from answer: Docker Hub's and
 * registry.k8s.io's API roots reply (401 or 200) within a few seconds.
 */
export async function registryReachable(timeoutMs = 5000): Promise<boolean> {
  const roots = ['https://registry-1.docker.io/v2/', 'https://registry.k8s.io/v2/'];
  const answers = await Promise.all(
    roots.map(async (url) => {
      try {
        const response = await fetch(url, { signal: AbortSignal.timeout(timeoutMs), redirect: 'manual' });
        return response.status < 500;
      } catch {
        return false;
      }
    }),
  );
  return answers.every(Boolean);
}
