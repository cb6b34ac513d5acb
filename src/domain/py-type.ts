/** Python's name for a JSON value's type, as DRF words its type errors ("Expected a list of items but got type "dict"."). */
export function pyType(v: unknown): string {
  if (v === null) return 'NoneType';
  if (Array.isArray(v)) return 'list';
  if (typeof v === 'object') return 'dict';
  if (typeof v === 'boolean') return 'bool';
  if (typeof v === 'number') return Number.isInteger(v) ? 'int' : 'float';
  return 'str';
}
