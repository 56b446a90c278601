// The message catalogue: one module per language, chosen by ?lang= or Accept-Language (English by default).
import { chooseLanguage } from '../../../platform/http/language.js';
import { en, type Messages } from './en.js';
import { hi } from './hi.js';

export type { Messages };
export const CATALOGUE: Record<string, Messages> = { en, hi };
export const LANGUAGES = Object.keys(CATALOGUE);

/** `?lang=` when it names a language we have, else the first Accept-Language entry we have, else English. */
export function pickLanguage(queryLang: unknown, acceptLanguage: string | undefined): Messages {
  return chooseLanguage(CATALOGUE, queryLang, acceptLanguage);
}
