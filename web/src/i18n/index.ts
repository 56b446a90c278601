// The message catalogue in use: English, or Hindi when the browser asks for Hindi before English. Pages
// read texts through useMessages(), so the catalogue is chosen once, where the app is mounted.
import { createContext, useContext } from 'react';
import { en, type Messages } from './en';
import { hi } from './hi';

export type { Messages };

export const MessagesContext = createContext<Messages>(en);

/** The catalogue for the browser's preferred languages (navigator.languages): the first of Hindi or English. */
export function catalogueFor(languages: readonly string[]): Messages {
  for (const tag of languages) {
    const language = tag.toLowerCase().split('-')[0];
    if (language === 'hi') return hi;
    if (language === 'en') return en;
  }
  return en;
}

export function useMessages(): Messages {
  return useContext(MessagesContext);
}

/** A value's label from a catalogue table, or the value itself when the table does not know it. */
export function label(table: Record<string, string>, value: string | null | undefined): string {
  if (value === null || value === undefined) return '';
  return table[value] ?? value;
}
