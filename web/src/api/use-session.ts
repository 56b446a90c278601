// The session as React state: components re-render when it changes (sign-in, refresh, sign-out).
import { useSyncExternalStore } from 'react';
import { onSessionChange, sessionState, type Session, type SessionState } from './session';

export function useSessionState(): SessionState {
  return useSyncExternalStore(onSessionChange, sessionState);
}

/** The signed-in session; only used below the point where the app knows it is signed in. */
export function useSession(): Session {
  const state = useSessionState();
  if (state.status !== 'signed-in') throw new Error('useSession() outside a signed-in page');
  return state.session;
}

/** Owners and admins change things; members read. The API enforces the same. */
export function canChange(session: Session): boolean {
  return session.role === 'owner' || session.role === 'admin';
}
