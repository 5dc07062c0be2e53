/** An apps/v1 IntOrString as it appears in JSON: a non-negative integer or a percentage like "25%". */
export type IntOrPercent = number | string;

export interface ParsedIntOrPercent {
  value: number;
  isPercent: boolean;
}

/** Thrown for values that are neither a non-negative integer nor a string like "25%". */
export class InvalidIntOrPercentError extends Error {
  override name = 'InvalidIntOrPercentError';
}

const PERCENT_PATTERN = /^(\d+)%$/;

/**
 * Parses an int-or-percent strictly, as apps/v1 validation does: integers must be whole and
 * non-negative, strings must be digits followed by "%". A bare numeric string such as "3" is
 * rejected, because in JSON it is a string that is not a percentage.
 */
export function parseIntOrPercent(value: IntOrPercent, field = 'value'): ParsedIntOrPercent {
  if (typeof value === 'number') {
    if (!Number.isSafeInteger(value) || value < 0) {
      throw new InvalidIntOrPercentError(`${field}: ${value} must be a non-negative integer or a percentage`);
    }
    return { value, isPercent: false };
  }
  const match = PERCENT_PATTERN.exec(value);
  if (match === null) {
    throw new InvalidIntOrPercentError(
      `${field}: ${JSON.stringify(value)} must be a non-negative integer or a percentage like "25%"`,
    );
  }
  return { value: Number(match[1]), isPercent: true };
}

/**
 * Resolves an int-or-percent against a total (upstream GetScaledValueFromIntOrPercent): integers are
 * returned as is, percentages are scaled and rounded up or down. Percentages above 100 are allowed
 * here; whether a field accepts them is a validation question (see validateRollingUpdate).
 */
export function resolveIntOrPercent(
  value: IntOrPercent,
  total: number,
  rounding: 'up' | 'down',
  field = 'value',
): number {
  const parsed = parseIntOrPercent(value, field);
  if (!parsed.isPercent) return parsed.value;
  // Multiply before dividing, like upstream, so whole results stay exact in floating point.
  const scaled = (parsed.value * total) / 100;
  return rounding === 'up' ? Math.ceil(scaled) : Math.floor(scaled);
}
