// The Rights Center's message catalogue: one module per language, chosen by ?lang= or Accept-Language.
import { chooseLanguage } from '../../../platform/http/language.js';
import { en, type Messages } from './en.js';
import { hi } from './hi.js';

export type { Messages };
export const CATALOGUE: Record<string, Messages> = { en, hi };

export function pickLanguage(queryLang: unknown, acceptLanguage: string | undefined): Messages {
  return chooseLanguage(CATALOGUE, queryLang, acceptLanguage);
}
