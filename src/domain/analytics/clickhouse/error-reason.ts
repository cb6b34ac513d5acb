/**
 * What an API user is told when ClickHouse refuses a query Quill printed: the reason, not the SQL. ClickHouse's
 * messages quote the query (`… in scope SELECT …`, `Syntax error: failed at position 12 (line 1, col 12): <the
 * rest of the query>`), which is Quill's generated SQL (team guards, subqueries, parameters) rather than anything the
 * user wrote; the whole message goes to the log for the operator.
 */

/** Where a ClickHouse message starts quoting the query or its own internals. */
const QUOTES_QUERY = [/ in scope /i, /\bWhile processing\b/, /\. Stack trace\b/, /: While executing\b/];
const FAILED_AT = /failed at position \d+(?: \(line \d+, col \d+\))?/;
const MAX_REASON = 240;

export function clickhouseReason(message: string): string {
  let text = message.replace(/^Code: \d+\. DB::Exception: /, '').trim();
  const suffix = /\s*\(([A-Z][A-Z0-9_]+)\)(?:\s*\(version [^)]*\))?\s*$/.exec(text);
  const name = suffix?.[1] ?? null;
  if (suffix) text = text.slice(0, suffix.index);
  const failedAt = FAILED_AT.exec(text);
  if (failedAt) text = text.slice(0, failedAt.index + failedAt[0].length);
  for (const marker of QUOTES_QUERY) {
    const at = text.search(marker);
    if (at >= 0) text = text.slice(0, at);
  }
  // Long quoted fragments are pieces of the query (an identifier or a literal of it), not the reason.
  text = text.replace(/(`[^`]{64,}`|'[^']{64,}')/g, '…').replace(/[\s.:;,]+$/, '');
  if (text.length > MAX_REASON) text = `${text.slice(0, MAX_REASON)}…`;
  return name ? `${text} (${name})` : text;
}
