import { OPERATOR_FLAGS, type OperatorOptions, readOperatorFlags } from '../../src/controllers/flags.ts';
import { parseCommandLine } from '../../src/runtime/manager/config.ts';

function defaults(): OperatorOptions {
  const parsed = parseCommandLine([], {}, OPERATOR_FLAGS);
  if (parsed === 'help') throw new Error('unexpected help');
  return readOperatorFlags(parsed.flags);
}

/** The operator's own options with none of its flags set: what src/main.ts gives the controllers then. */
export const OPERATOR_DEFAULTS: OperatorOptions = defaults();
