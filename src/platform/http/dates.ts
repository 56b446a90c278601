// A date and time (UTC) as the person's pages show it, the whole of it in the page's language. ICU's
// hi-IN long time style mixes scripts ("5:26:33 pm UTC बजे"), so Hindi uses the 24-hour clock
// (no am/pm) and names the zone in Devanagari: "29 नवंबर 2026 को 17:26:33 बजे (यूटीसी)".
const FORMATS: Record<string, { format: Intl.DateTimeFormat; zone: string }> = {
  en: { format: new Intl.DateTimeFormat('en-IN', { dateStyle: 'long', timeStyle: 'long', timeZone: 'UTC' }), zone: '' },
  hi: { format: new Intl.DateTimeFormat('hi-IN', { dateStyle: 'long', timeStyle: 'medium', hourCycle: 'h23', timeZone: 'UTC' }), zone: ' (यूटीसी)' },
};

export function formatUtcDateTime(lang: string, at: Date): string {
  const f = FORMATS[lang] ?? FORMATS.en!;
  return `${f.format.format(at)}${f.zone}`;
}
