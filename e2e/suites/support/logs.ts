/**
 * Log lines that show an RBAC denial: the API server's 403 message ("... is forbidden: User ...
 * cannot list resource ..."), or a 403 status the operator logged without that message. A bare
 * "403" is not enough: resourceVersions and uids contain it.
 */
const DENIAL_PATTERNS = [
  /forbidden/i,
  /\bHTTP 403\b/,
  /\b403 Forbidden\b/i,
  /"(?:status|statusCode|code)"\s*:\s*"?403\b/,
  /\b(?:status|statusCode|code)[=:]\s*403\b/,
];

export function rbacDenials(lines: readonly string[]): string[] {
  return lines.filter((line) => DENIAL_PATTERNS.some((pattern) => pattern.test(line)));
}
