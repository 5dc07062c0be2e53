/** The benchmark's progress, on stderr (stdout holds only the figures). */
export const log = (msg: string) => process.stderr.write(`[bench] ${msg}\n`);
