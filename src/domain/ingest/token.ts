/**
 * §1.4 project token lookup, in Django `get_token` order:
 *   (GET only) query `token`, query `api_key` → form `api_key`, form `token` → parsed body (arrays: first item):
 *   `$token`, `token`, `api_key`, `properties.token`.
 * The batch envelope's `api_key`/`token` are the body fields above. As a last resort the first batch item is
 * searched the same way (posthog-js copies the token from the first event into the envelope, so a client that
 * omits the envelope key still carries it there).
 * Values are trimmed; empty or non-string values are skipped.
 */
export function extractToken(
  payload: unknown,
  form: Record<string, string> | null,
  query: Record<string, string>,
  method: string,
): { token: string | null; projectId: unknown } {
  return { token: findToken(payload, form, query, method), projectId: findProjectId(payload, form, query) };
}

function clean(v: unknown): string | null {
  if (typeof v !== 'string') return null;
  const t = v.trim();
  return t.length > 0 ? t : null;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

function tokenOfObject(o: Record<string, unknown>): string | null {
  const props = o['properties'];
  return (
    clean(o['$token']) ??
    clean(o['token']) ??
    clean(o['api_key']) ??
    (isObject(props) ? clean(props['token']) : null)
  );
}

function findToken(
  payload: unknown,
  form: Record<string, string> | null,
  query: Record<string, string>,
  method: string,
): string | null {
  if (method.toUpperCase() === 'GET') {
    const q = clean(query['token']) ?? clean(query['api_key']);
    if (q !== null) return q;
  }
  if (form !== null) {
    const f = clean(form['api_key']) ?? clean(form['token']);
    if (f !== null) return f;
  }
  const body = Array.isArray(payload) ? payload[0] : payload;
  if (!isObject(body)) return null;
  const t = tokenOfObject(body);
  if (t !== null) return t;
  const batch = body['batch'];
  if (Array.isArray(batch) && isObject(batch[0])) return tokenOfObject(batch[0]);
  return null;
}

/**
 * `project_id` for the personal-API-key path, raw (the caller validates that it is an integer, §1.4 → 400
 * `invalid_project`). Order: query, form, body (first item of an array). Django's query branch read the form by
 * mistake; the intended query read is used here. Returns null when absent.
 */
function findProjectId(payload: unknown, form: Record<string, string> | null, query: Record<string, string>): unknown {
  const q = query['project_id'];
  if (q !== undefined && q !== '') return q;
  const f = form?.['project_id'];
  if (f !== undefined && f !== '') return f;
  const body = Array.isArray(payload) ? payload[0] : payload;
  if (isObject(body)) {
    const b = body['project_id'];
    if (b !== undefined && b !== null && b !== '') return b;
  }
  return null;
}
