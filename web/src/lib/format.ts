// Dates and numbers as the reader expects them: in their own time zone and locale.
const dateTime = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });
const thisYearDateTime = new Intl.DateTimeFormat(undefined, { day: 'numeric', month: 'short', hour: '2-digit', minute: '2-digit' });
const dateOnly = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium' });
const dayOfMonth = new Intl.DateTimeFormat(undefined, { day: 'numeric', month: 'short', timeZone: 'UTC' });

/** Date and time; the year only when it is not this year (tables stay narrow). */
export function formatDateTime(iso: string | null | undefined): string {
  if (!iso) return '';
  const d = new Date(iso);
  return (d.getFullYear() === new Date().getFullYear() ? thisYearDateTime : dateTime).format(d);
}

export function formatDate(iso: string | null | undefined): string {
  return iso ? dateOnly.format(new Date(iso)) : '';
}

/** A UTC calendar day (YYYY-MM-DD) as "23 Nov". */
export function formatDay(day: string): string {
  return dayOfMonth.format(new Date(`${day}T00:00:00Z`));
}

export function formatNumber(n: number): string {
  return n.toLocaleString();
}

/** An <input type="date"> value as the start (or end) of that day in the reader's time zone, ISO 8601. */
export function dayBoundary(value: string, end: boolean): string | undefined {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(value);
  if (!m) return undefined;
  const d = new Date(Number(m[1]), Number(m[2]) - 1, Number(m[3]), end ? 23 : 0, end ? 59 : 0, end ? 59 : 0, end ? 999 : 0);
  return d.toISOString();
}

/** The first characters of an id, enough to tell records apart on screen. */
export function shortId(id: string): string {
  return id.length > 13 ? `${id.slice(0, 8)}…${id.slice(-4)}` : id;
}
