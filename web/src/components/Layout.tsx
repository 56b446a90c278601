// The frame of every signed-in page: a skip link, the organization and the user, sign-out, and the
// navigation (what the role may open), which folds into a menu button at phone width.
import { useEffect, useRef, useState, type ReactNode } from 'react';
import { Link, useLocation } from 'wouter';
import { signOut } from '../api/session';
import { canChange, useSession } from '../api/use-session';
import { label, useMessages } from '../i18n';
import { useContactPersonMissing } from '../lib/contact-person';
import { PAGES } from '../routes';

export function Layout({ children }: { children: ReactNode }) {
  const m = useMessages();
  const session = useSession();
  const [location] = useLocation();
  // The menu (phone width) is open for the page it was opened on: following a link closes it.
  const [menuOpenOn, setMenuOpenOn] = useState<string | null>(null);
  const menuOpen = menuOpenOn === location;
  const manager = canChange(session);
  const noContactPerson = useContactPersonMissing();
  // After following a link, focus moves to the new page's content, as a full page load would do for a
  // screen reader or keyboard user (not on the first load: the browser starts at the top).
  const main = useRef<HTMLElement>(null);
  const loaded = useRef(false);
  useEffect(() => {
    if (loaded.current) main.current?.focus();
    loaded.current = true;
  }, [location]);

  const items: { href: string; text: string; show: boolean }[] = [
    { href: PAGES.overview, text: m.nav.overview, show: true },
    { href: PAGES.grievances, text: m.nav.grievances, show: true },
    { href: PAGES.nominees, text: m.nav.nominees, show: true },
    { href: PAGES.fulfilment, text: m.nav.fulfilment, show: true },
    { href: PAGES.systems, text: m.nav.systems, show: true },
    { href: PAGES.dataCategories, text: m.nav.dataCategories, show: true },
    { href: PAGES.consentLinks, text: m.nav.consentLinks, show: manager },
    { href: PAGES.assets, text: m.nav.assets, show: true },
  ];
  const settings: { href: string; text: string; show: boolean }[] = [
    { href: PAGES.apiKeys, text: m.nav.apiKeys, show: manager },
    { href: PAGES.webhooks, text: m.nav.webhooks, show: manager },
    { href: PAGES.contactPerson, text: m.nav.contactPerson, show: manager },
    { href: PAGES.signingKeys, text: m.nav.signingKeys, show: manager },
    { href: PAGES.rightsCenter, text: m.nav.rightsCenter, show: manager },
    { href: PAGES.members, text: m.nav.members, show: manager },
    { href: PAGES.auditLog, text: m.nav.auditLog, show: manager },
  ];
  const current = (href: string) => (href === '/' ? location === '/' : location === href || location.startsWith(`${href}/`));
  const link = (i: { href: string; text: string }) => (
    <li key={i.href}>
      <Link href={i.href} aria-current={current(i.href) ? 'page' : undefined}>
        {i.text}
      </Link>
    </li>
  );

  return (
    <div className="shell">
      <a className="skip" href="#main">
        {m.app.skipToContent}
      </a>
      <header className="topbar">
        <span className="brand">
          {m.app.name} <span className="org">{session.organization.name}</span>
        </span>
        <button
          type="button"
          className="button secondary menu-button"
          aria-expanded={menuOpen}
          aria-controls="nav"
          onClick={() => setMenuOpenOn(menuOpen ? null : location)}
          onKeyDown={(e) => {
            // The open menu comes next for the keyboard: in the page's order, sign-out lies between.
            if (menuOpen && e.key === 'Tab' && !e.shiftKey) {
              const first = document.querySelector<HTMLAnchorElement>('#nav a');
              if (first) {
                e.preventDefault();
                first.focus();
              }
            }
          }}
        >
          {m.app.menu}
        </button>
        <span className="whoami">{m.app.signedInAs(session.user.email, label(m.labels.role, session.role))}</span>
        <button type="button" className="button secondary" onClick={() => void signOut()}>
          {m.app.signOut}
        </button>
      </header>
      <nav id="nav" className={`sidebar${menuOpen ? ' open' : ''}`} aria-label={m.app.navLabel}>
        <ul>{items.filter((i) => i.show).map(link)}</ul>
        {settings.some((i) => i.show) ? (
          <>
            <h2 className="nav-heading">{m.nav.settings}</h2>
            <ul>{settings.filter((i) => i.show).map(link)}</ul>
          </>
        ) : null}
      </nav>
      <main id="main" tabIndex={-1} ref={main}>
        {session.role === 'member' ? <p className="readonly">{m.app.readOnly}</p> : null}
        {noContactPerson ? (
          <div className="notice notice-warning" data-testid="no-contact-person">
            <p>
              {m.app.noContactPerson} {manager ? <Link href={PAGES.contactPerson}>{m.app.setContactPerson}</Link> : null}
            </p>
          </div>
        ) : null}
        {children}
      </main>
    </div>
  );
}
