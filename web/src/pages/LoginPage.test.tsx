// Sign-in says what went wrong in words a person can act on: wrong password, not a member of this
// organization, or too many attempts (with the wait); the bare domain asks for the organization.
import { render, screen } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, describe, expect, test, vi } from 'vitest';
import { LoginPage, OrganizationPicker } from './LoginPage';

afterEach(() => vi.unstubAllGlobals());

async function signInAnswered(status: number, body: unknown, headers: Record<string, string> = {}) {
  vi.stubGlobal('fetch', async () => new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json', ...headers } }));
  render(<LoginPage ended={false} />);
  const user = userEvent.setup();
  await user.type(screen.getByLabelText('Email'), 'privacy@acme.example');
  await user.type(screen.getByLabelText('Password'), 'a password{Enter}');
  return (await screen.findByRole('alert')).textContent;
}

describe('LoginPage', () => {
  test('401: the email or the password is wrong', async () => {
    expect(await signInAnswered(401, { error: 'Invalid email or password' })).toBe('The email or the password is wrong.');
  });

  test('after a failed sign-in the focus is on the error, and stays in the field being typed in (issue 30)', async () => {
    await signInAnswered(401, { error: 'Invalid email or password' });
    expect(document.activeElement).toBe(screen.getByRole('alert'));
    const user = userEvent.setup();
    await user.click(screen.getByLabelText('Password'));
    await user.type(screen.getByLabelText('Password'), 'more');
    expect(document.activeElement).toBe(screen.getByLabelText('Password'));
  });

  test('403: not a member of the organization at this address', async () => {
    expect(await signInAnswered(403, { error: 'User not a member of this tenant' })).toBe(`This account is not a member of the organization at ${window.location.host}.`);
  });

  test('429: how long to wait, from Retry-After', async () => {
    expect(await signInAnswered(429, { error: 'Too many login attempts' }, { 'retry-after': '600' })).toBe('Too many attempts. Try again in 10 minutes.');
  });

  test('a session that ended says so above the form', () => {
    render(<LoginPage ended />);
    expect(screen.getByRole('alert').textContent).toBe('Your session has ended. Sign in again.');
  });
});

describe('OrganizationPicker', () => {
  test('refuses what cannot be an organization name, next to the field', async () => {
    render(<OrganizationPicker />);
    const user = userEvent.setup();
    await user.type(screen.getByLabelText('Organization'), 'Not valid!{Enter}');
    const input = screen.getByLabelText('Organization');
    expect(input.getAttribute('aria-invalid')).toBe('true');
    expect(screen.getAllByText('Use 3–63 lower-case letters, digits and dashes, starting with a letter.').length).toBeGreaterThan(0);
  });
});
