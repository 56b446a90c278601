// Forms show the API's `details` beside the field they name, tied to it for screen readers, and every
// problem for a field the form does not show in the summary, so none is lost.
import { render, screen } from '@testing-library/react';
import { describe, expect, test } from 'vitest';
import { ApiError } from '../api/errors';
import { Field, FormError } from './fields';
import { Pager } from './Pager';

const error = new ApiError(400, 'Invalid request body: phone must be E.164; expiry_hours must be at most 24; asset_id must be a UUID', [
  { field: 'phone', message: 'must be E.164' },
  { field: 'expiry_hours', message: 'must be at most 24' },
  { field: 'asset_id', message: 'must be a UUID' },
]);

describe('Field and FormError', () => {
  test("a field shows its problem, marked invalid and described by it; other fields' problems are not its own", () => {
    render(
      <>
        <Field label="Phone" field="phone" error={error} hint="+ and the country code">
          {(ids) => <input {...ids} />}
        </Field>
        <Field label="Email" field="email" error={error}>
          {(ids) => <input {...ids} />}
        </Field>
      </>,
    );
    const phone = screen.getByLabelText('Phone');
    expect(phone.getAttribute('aria-invalid')).toBe('true');
    const described = (phone.getAttribute('aria-describedby') ?? '').split(' ').map((id) => document.getElementById(id)?.textContent);
    expect(described).toEqual(['+ and the country code', 'must be E.164']);
    expect(screen.getByLabelText('Email').getAttribute('aria-invalid')).toBeNull();
  });

  test('nested problems (purposes.0.name) belong to their list field', () => {
    const nested = new ApiError(400, 'x', [{ field: 'purposes.0.name', message: 'must not be empty' }]);
    expect(nested.problemsFor('purposes')).toEqual(['must not be empty']);
    expect(nested.problemsFor('purposes.0.name')).toEqual(['must not be empty']);
    expect(nested.problemsFor('purpose')).toEqual([]);
  });

  test('the summary lists the problems of fields the form does not show', () => {
    render(<FormError error={error} fields={['phone', 'expiry_hours']} />);
    const alert = screen.getByRole('alert');
    expect(alert.textContent).toContain(error.message);
    expect(screen.getAllByRole('listitem').map((li) => li.textContent)).toEqual(['asset_id must be a UUID']);
  });

  test("when every problem is beside its field, the summary just says so", () => {
    render(<FormError error={error} fields={['phone', 'expiry_hours', 'asset_id']} />);
    expect(screen.getByRole('alert').textContent).toBe('Some fields need fixing:');
  });
});

describe('Pager', () => {
  test('says which records are shown and disables what cannot be done', () => {
    const { rerender } = render(<Pager count={120} limit={50} offset={0} onChange={() => {}} />);
    expect(screen.getByText('1–50 of 120')).toBeTruthy();
    expect((screen.getByRole('button', { name: 'Previous' }) as HTMLButtonElement).disabled).toBe(true);
    expect((screen.getByRole('button', { name: 'Next' }) as HTMLButtonElement).disabled).toBe(false);
    rerender(<Pager count={120} limit={50} offset={100} onChange={() => {}} />);
    expect(screen.getByText('101–120 of 120')).toBeTruthy();
    expect((screen.getByRole('button', { name: 'Next' }) as HTMLButtonElement).disabled).toBe(true);
    rerender(<Pager count={0} limit={50} offset={0} onChange={() => {}} />);
    expect(screen.getByText('None')).toBeTruthy();
  });
});
