import type { Settlement } from './types';

const COLUMNS = ['batch', 'closed_at', 'transaction', 'sale', 'kind', 'amount', 'gateway_amount', 'verdict', 'bank', 'open_until', 'amount_returned', 'return_code', 'returned_at'] as const;

/** RFC 4180: a field with a comma, a quote or a line break is quoted; a leading =+-@ is prefixed (no formula runs). */
function field(value: string): string {
  const safe = /^[=+\-@\t\r]/.test(value) ? `'${value}` : value;
  return /[",\r\n]/.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe;
}

/** The settlement's lines as CSV (`Accept: text/csv`), one header row, CRLF line ends. */
export function settlementsCsv(s: Settlement): string {
  const rows = s.lines.map((l) => [s.batch, s.closed_at, l.transaction, l.sale ?? '', l.kind, l.amount ?? '', l.gateway_amount, l.verdict, l.bank ?? '', l.open_until ?? '', l.amount_returned ?? '', l.return_code ?? '', l.returned_at ?? '']);
  return [COLUMNS as readonly string[], ...rows].map((r) => r.map(field).join(',')).join('\r\n') + '\r\n';
}
