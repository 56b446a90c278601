// Form fields wired for assistive technology (label, hint and error tied to the input) and showing the
// API's `details` for their field right next to it.
import { useEffect, useId, useRef, type ReactNode } from 'react';
import type { ApiError } from '../api/errors';
import { useMessages } from '../i18n';

interface FieldIds {
  id: string;
  'aria-describedby'?: string;
  'aria-invalid'?: true;
}

export function Field(props: { label: string; field?: string; error?: ApiError | null; hint?: string; children: (ids: FieldIds) => ReactNode; className?: string }) {
  const id = useId();
  const problems = props.field && props.error ? props.error.problemsFor(props.field) : [];
  const described = [props.hint ? `${id}-hint` : '', problems.length ? `${id}-error` : ''].filter(Boolean).join(' ');
  return (
    <div className={`field${problems.length ? ' field-invalid' : ''}${props.className ? ` ${props.className}` : ''}`}>
      <label htmlFor={id}>{props.label}</label>
      {props.hint ? (
        <span className="hint" id={`${id}-hint`}>
          {props.hint}
        </span>
      ) : null}
      {props.children({ id, ...(described ? { 'aria-describedby': described } : {}), ...(problems.length ? { 'aria-invalid': true } : {}) })}
      {problems.length ? (
        <span className="field-error" id={`${id}-error`}>
          {problems.join('; ')}
        </span>
      ) : null}
    </div>
  );
}

/**
 * The answer's sentence, and the problems with fields this form does not show (so none is lost).
 * `focus`: each new error takes the focus (a sign-in form, whose failure would otherwise leave it on <body>).
 */
export function FormError({ error, fields, focus = false }: { error: ApiError | null; fields: string[]; focus?: boolean }) {
  const m = useMessages();
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    if (focus && error) box.current?.focus();
  }, [focus, error]);
  if (!error) return null;
  const shown = (f: string) => fields.some((name) => f === name || f.startsWith(`${name}.`));
  const others = error.details.filter((d) => !shown(d.field));
  const fieldProblems = error.details.length > others.length;
  return (
    <div className="notice notice-error" role="alert" ref={box} tabIndex={focus ? -1 : undefined}>
      <p>{fieldProblems && others.length === 0 ? m.common.fixFields : error.message}</p>
      {others.length ? (
        <ul>
          {others.map((d) => (
            <li key={`${d.field}:${d.message}`}>
              {d.field} {d.message}
            </li>
          ))}
        </ul>
      ) : null}
    </div>
  );
}
