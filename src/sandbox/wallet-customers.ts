import { ERRORS } from './errors';
import { CUSTOMER_TEXT_FIELDS, type CustomerTextField, type FixtureCustomer } from './fixtures';
import type { FixtureStore, NewCustomer } from './fixture-store';
import { customerView, fail, type Answer } from './reads';
import type { SandboxWireFormat } from './settings';

/**
 * `POST /customers`, `PUT /customers/{c}`, `DELETE /customers/{c}` (gateway-facts.md, the wallet; the REST
 * reference's Create/Update/Delete Customer). Create needs `company`, or `first_name` and `last_name`; update
 * is partial (a field sent empty, or null, is cleared; one not sent is kept); delete answers
 * `{"status":"success"}` and takes the customer's payment methods with it.
 */

/** The wire's names; the spec's `firstname`/`lastname` are accepted too (the wire's win when both are sent). */
type FieldName = 'customerid' | 'company' | 'first_name' | 'last_name' | 'email' | CustomerTextField;
const FIELDS: readonly FieldName[] = ['customerid', 'company', 'first_name', 'last_name', 'email', ...CUSTOMER_TEXT_FIELDS];
const ALIASES: Readonly<Record<string, FieldName>> = { firstname: 'first_name', lastname: 'last_name' };
/** Notes and descriptions are free text; the rest are short (the emulator's bounds: the reference gives none). */
const LONG_FIELDS = new Set<FieldName>(['notes', 'description']);

type Fields = Partial<Record<FieldName, string>>;

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * The fields a body sets. Strings, or numbers written as text (the reference sends `postalcode` as a number);
 * null clears like "". Unknown fields are ignored, as on transactions, and never stored.
 */
function readFields(body: unknown): { fields: Fields } | { answer: Answer } {
  if (!isRecord(body)) return { answer: fail(ERRORS.bodyNotObject) };
  const fields: Fields = {};
  const entries = [...Object.entries(body).filter(([k]) => ALIASES[k]), ...Object.entries(body).filter(([k]) => !ALIASES[k])];
  for (const [raw, v] of entries) {
    const name = ALIASES[raw] ?? (FIELDS as readonly string[]).find((f) => f === raw);
    if (!name || v === undefined) continue;
    const max = LONG_FIELDS.has(name as FieldName) ? 4096 : 255;
    const value = v === null ? '' : typeof v === 'number' && Number.isFinite(v) ? String(v) : v;
    if (typeof value !== 'string' || value.length > max) return { answer: fail(ERRORS.invalidField, `${name} must be a string of at most ${max} characters`) };
    fields[name as FieldName] = value;
  }
  return { fields };
}

const named = (company: string, first: string, last: string) => company !== '' || (first !== '' && last !== '');

/** The answer of a write: the reference's Create/Update Customer example (no custom_fields; nulls for the lists). */
function writtenView(c: FixtureCustomer, format: SandboxWireFormat, custidAsNumber: boolean): Record<string, unknown> {
  const { custom_fields: _unused, ...view } = customerView(c, format);
  // gateway-facts.md: `custid` is a JSON number in the create answer, a string everywhere else.
  return { ...view, custid: custidAsNumber ? Number(c.custid) : c.custid, payment_methods: null, billing_schedules: null };
}

export function createCustomer(store: FixtureStore, body: unknown, format: SandboxWireFormat): Answer {
  const read = readFields(body);
  if ('answer' in read) return read.answer;
  const f = read.fields;
  if (!named(f.company ?? '', f.first_name ?? '', f.last_name ?? '')) return fail(ERRORS.missingCustomerName);
  const fields: NewCustomer = {
    customerid: f.customerid ?? '',
    firstname: f.first_name ?? '',
    lastname: f.last_name ?? '',
    company: f.company ?? '',
    email: f.email ?? '',
    text: Object.fromEntries(CUSTOMER_TEXT_FIELDS.map((t) => [t, f[t] ?? ''])) as Record<CustomerTextField, string>,
  };
  return { status: 200, body: writtenView(store.createCustomer(fields), format, true) };
}

export function updateCustomer(store: FixtureStore, customerId: string, body: unknown, format: SandboxWireFormat): Answer {
  const customer = store.customer(customerId);
  if (!customer) return fail(ERRORS.customerNotFound);
  const read = readFields(body);
  if ('answer' in read) return read.answer;
  const f = read.fields;
  // A change that would leave the customer nameless is refused whole (never more lenient than the gateway).
  if (!named(f.company ?? customer.company, f.first_name ?? customer.firstname, f.last_name ?? customer.lastname)) return fail(ERRORS.missingCustomerName);
  if (f.customerid !== undefined) customer.customerid = f.customerid;
  if (f.company !== undefined) customer.company = f.company;
  if (f.first_name !== undefined) customer.firstname = f.first_name;
  if (f.last_name !== undefined) customer.lastname = f.last_name;
  if (f.email !== undefined) customer.email = f.email;
  for (const t of CUSTOMER_TEXT_FIELDS) if (f[t] !== undefined) customer.text[t] = f[t] as string;
  return { status: 200, body: writtenView(customer, format, false) };
}

export function deleteCustomer(store: FixtureStore, customerId: string): Answer {
  const customer = store.customer(customerId);
  if (!customer) return fail(ERRORS.customerNotFound);
  store.deleteCustomer(customer);
  return { status: 200, body: { status: 'success' } };
}
