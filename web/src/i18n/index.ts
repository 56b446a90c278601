// The message catalogue in use. One language today; pages read texts through useMessages() so another
// catalogue of the same shape can be provided without touching them.
import { createContext, useContext } from 'react';
import { en, type Messages } from './en';

export type { Messages };

export const MessagesContext = createContext<Messages>(en);

export function useMessages(): Messages {
  return useContext(MessagesContext);
}

/** A value's label from a catalogue table, or the value itself when the table does not know it. */
export function label(table: Record<string, string>, value: string | null | undefined): string {
  if (value === null || value === undefined) return '';
  return table[value] ?? value;
}
