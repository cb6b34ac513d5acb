/**
 * Account field rules, as PostHog's Django models and DRF serializers apply them: the column lengths
 * (organization name 64, user first name 150, e-mail 254, project name 200, role name 200, key label 40) and
 * Django's EmailValidator. Each check returns the first problem as a DRF field error, or null.
 */
export interface FieldProblem {
  attr: string;
  /** DRF codes after drf-exceptions-hog (`invalid` is renamed `invalid_input`). */
  code: 'required' | 'null' | 'blank' | 'max_length' | 'invalid_input' | 'not_a_list';
  detail: string;
}

export const MAX_LENGTH = {
  organizationName: 64,
  firstName: 150,
  email: 254,
  projectName: 200,
  roleName: 200,
  keyLabel: 40,
} as const;

const problem = (attr: string, code: FieldProblem['code'], detail: string): FieldProblem => ({ attr, code, detail });

export interface TextRule {
  max: number;
  /** Missing is an error (`required`); otherwise a missing field is fine. */
  required: boolean;
  /** An empty or all-blank string is accepted (DRF `allow_blank`). */
  allowBlank?: boolean;
}

/** The cleaned value of a field (undefined: absent and optional), or its first problem. */
export type Checked = { value: string | undefined } | { problem: FieldProblem };

/**
 * A DRF CharField: null, non-string, then on the trimmed text (DRF trims by default, and stores it trimmed)
 * blank and length, in DRF's order.
 */
export function checkText(attr: string, value: unknown, rule: TextRule): Checked {
  if (value === undefined) return rule.required ? { problem: problem(attr, 'required', 'This field is required.') } : { value: undefined };
  if (value === null) return { problem: problem(attr, 'null', 'This field may not be null.') };
  if (typeof value !== 'string') return { problem: problem(attr, 'invalid_input', 'Not a valid string.') };
  const text = value.trim();
  if (!rule.allowBlank && text === '') return { problem: problem(attr, 'blank', 'This field may not be blank.') };
  // DRF counts characters (Python str length: code points), not UTF-16 units.
  if ([...text].length > rule.max) return { problem: problem(attr, 'max_length', `Ensure this field has no more than ${rule.max} characters.`) };
  return { value: text };
}

// Django's EmailValidator: a dot-atom or quoted local part; a domain of labels ending in a 2-63 character
// top-level label, `localhost`, or a bracketed IP literal.
const DOT_ATOM = /^[-!#$%&'*+/=?^_`{}|~0-9a-z]+(\.[-!#$%&'*+/=?^_`{}|~0-9a-z]+)*$/i;
const QUOTED = /^"([\x01-\x08\x0b\x0c\x0e-\x1f!#-[\]-\x7f]|\\[\x01-\x09\x0b\x0c\x0e-\x7f])*"$/i;
const DOMAIN = /^((?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+)(?:[a-z0-9-]{2,63})$/i;
const IPV4 = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/;

function validDomain(domain: string): boolean {
  if (domain === 'localhost') return true;
  if (DOMAIN.test(domain) && !domain.endsWith('-')) return true;
  // Internationalised domains are checked in their ASCII (punycode) form, as Django does.
  try {
    const ascii = new URL(`http://${domain}`).hostname;
    if (ascii !== domain.toLowerCase() && DOMAIN.test(ascii) && !ascii.endsWith('-')) return true;
  } catch {
    /* not a host name */
  }
  const literal = /^\[(.*)\]$/.exec(domain);
  if (!literal) return false;
  const ip = literal[1]!;
  if (IPV4.test(ip)) return true;
  if (/^IPv6:/i.test(ip)) {
    try {
      new URL(`http://[${ip.slice(5)}]`);
      return true;
    } catch {
      return false;
    }
  }
  return false;
}

export function isValidEmail(value: string): boolean {
  if (value.length > 320) return false;
  const at = value.lastIndexOf('@');
  if (at <= 0 || at === value.length - 1) return false;
  const user = value.slice(0, at);
  const domain = value.slice(at + 1);
  return (DOT_ATOM.test(user) || QUOTED.test(user)) && validDomain(domain);
}

/** A DRF EmailField: the CharField checks with 254 characters, then Django's EmailValidator. */
export function checkEmail(attr: string, value: unknown, required: boolean): Checked {
  const text = checkText(attr, value, { max: MAX_LENGTH.email, required });
  if ('problem' in text || text.value === undefined) return text;
  return isValidEmail(text.value) ? text : { problem: problem(attr, 'invalid_input', 'Enter a valid email address.') };
}
