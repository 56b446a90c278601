// The message catalogue: one module per language, chosen by ?lang= or Accept-Language (English by default).
import { en, type Messages } from './en.js';
import { hi } from './hi.js';

export type { Messages };
export const CATALOGUE: Record<string, Messages> = { en, hi };
export const LANGUAGES = Object.keys(CATALOGUE);

/** `?lang=` when it names a language we have, else the first Accept-Language entry we have, else English. */
export function pickLanguage(queryLang: unknown, acceptLanguage: string | undefined): Messages {
  if (typeof queryLang === 'string' && CATALOGUE[queryLang]) return CATALOGUE[queryLang]!;
  const ranked = (acceptLanguage ?? '')
    .split(',')
    .map((part, i) => {
      const [tag = '', ...params] = part.trim().toLowerCase().split(';');
      const q = params.map((p) => /^\s*q=([0-9.]+)\s*$/.exec(p)).find(Boolean);
      return { base: tag.split('-')[0]!, q: q ? Number(q[1]) : 1, i };
    })
    .filter((x) => x.q > 0 && CATALOGUE[x.base])
    .sort((a, b) => b.q - a.q || a.i - b.i);
  return CATALOGUE[ranked[0]?.base ?? 'en']!;
}
