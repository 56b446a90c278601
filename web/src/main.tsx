// Entry: mounts the app, in the language the browser prefers (English or Hindi).
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { App } from './App';
import { catalogueFor, MessagesContext } from './i18n';
import './styles.css';

const messages = catalogueFor(navigator.languages ?? [navigator.language]);
document.documentElement.lang = messages.lang;

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <MessagesContext.Provider value={messages}>
      <App />
    </MessagesContext.Provider>
  </StrictMode>,
);
