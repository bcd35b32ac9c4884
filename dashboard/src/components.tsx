// Small accessible building blocks: labelled fields whose API errors sit right under them,
// a modal confirmation (<dialog>), a copy button and status notices.
import type { ComponentChildren } from 'preact';
import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';
import { ApiError, type FieldErrors } from './api';

/** Problems of one form field: the API keys that equal one of `names` or start with `name[` / `name.`. */
export function errorsFor(errors: FieldErrors, ...names: string[]): string[] {
  const out: string[] = [];
  for (const [key, list] of Object.entries(errors)) {
    if (names.some((n) => key === n || key.startsWith(`${n}[`) || key.startsWith(`${n}.`))) out.push(...list);
  }
  return out;
}

/** The API's problems that no field of the form shows (so they are listed above it, never lost). */
export function unclaimed(errors: FieldErrors, claimed: string[]): FieldErrors {
  const out: FieldErrors = {};
  for (const [key, list] of Object.entries(errors)) {
    if (!claimed.some((n) => key === n || key.startsWith(`${n}[`) || key.startsWith(`${n}.`))) out[key] = list;
  }
  return out;
}

export function FieldError({ id, messages }: { id: string; messages: string[] }) {
  if (messages.length === 0) return null;
  return (
    <ul class="field-error" id={id}>
      {messages.map((m) => (
        <li key={m}>{m}</li>
      ))}
    </ul>
  );
}

/**
 * Preact's typings tie the allowed ARIA roles to a literal `type`; an input whose type is chosen at
 * run time (text/password toggles, date fields) is widened through this.
 */
export const inputType = (t: 'text' | 'password' | 'date' | 'number') => t as 'text';

interface FieldProps {
  id: string;
  label: string;
  value: string;
  onInput: (v: string) => void;
  errors?: string[];
  hint?: string;
  type?: 'text' | 'password' | 'date' | 'number';
  required?: boolean;
  multiline?: boolean;
  placeholder?: string;
  autoComplete?: string;
  min?: number;
  inputMode?: 'numeric' | 'text';
}

export function Field(p: FieldProps) {
  const errors = p.errors ?? [];
  const describedBy = [p.hint ? `${p.id}-hint` : '', errors.length ? `${p.id}-error` : ''].filter(Boolean).join(' ') || undefined;
  const common = {
    id: p.id,
    name: p.id,
    value: p.value,
    required: p.required,
    placeholder: p.placeholder,
    'aria-invalid': errors.length > 0 ? ('true' as const) : undefined,
    'aria-describedby': describedBy,
  };
  return (
    <div class={`field${errors.length ? ' invalid' : ''}`}>
      <label for={p.id}>{p.label}</label>
      {p.multiline ? (
        <textarea {...common} rows={3} onInput={(e) => p.onInput(e.currentTarget.value)} />
      ) : (
        <input
          {...common}
          type={inputType(p.type ?? 'text')}
          min={p.min}
          inputMode={p.inputMode}
          autoComplete={p.autoComplete ?? 'off'}
          spellcheck={false}
          onInput={(e) => p.onInput(e.currentTarget.value)}
        />
      )}
      {p.hint && (
        <p class="hint" id={`${p.id}-hint`}>
          {p.hint}
        </p>
      )}
      <FieldError id={`${p.id}-error`} messages={errors} />
    </div>
  );
}

export function Checkbox(p: { id: string; label: string; checked: boolean; onChange: (v: boolean) => void; errors?: string[] }) {
  const errors = p.errors ?? [];
  return (
    <div class={`field checkbox${errors.length ? ' invalid' : ''}`}>
      <input
        id={p.id}
        type="checkbox"
        checked={p.checked}
        aria-invalid={errors.length > 0 ? 'true' : undefined}
        aria-describedby={errors.length ? `${p.id}-error` : undefined}
        onChange={(e) => p.onChange(e.currentTarget.checked)}
      />
      <label for={p.id}>{p.label}</label>
      <FieldError id={`${p.id}-error`} messages={errors} />
    </div>
  );
}

export function Select<T extends string>(p: {
  id: string;
  label: string;
  value: T;
  options: Array<[T, string]>;
  onChange: (v: T) => void;
  errors?: string[];
}) {
  const errors = p.errors ?? [];
  return (
    <div class={`field${errors.length ? ' invalid' : ''}`}>
      <label for={p.id}>{p.label}</label>
      <select
        id={p.id}
        value={p.value}
        aria-invalid={errors.length > 0 ? 'true' : undefined}
        aria-describedby={errors.length ? `${p.id}-error` : undefined}
        onChange={(e) => p.onChange(e.currentTarget.value as T)}
      >
        {p.options.map(([v, text]) => (
          <option key={v} value={v}>
            {text}
          </option>
        ))}
      </select>
      <FieldError id={`${p.id}-error`} messages={errors} />
    </div>
  );
}

/** A status line read out by screen readers; `kind` error is an alert. */
export function Notice({ kind, children }: { kind: 'error' | 'ok' | 'info'; children: ComponentChildren }) {
  return (
    <div class={`notice ${kind}`} role={kind === 'error' ? 'alert' : 'status'}>
      {children}
    </div>
  );
}

/** Shows an ApiError (or any error) with the problems no field claimed. */
export function ErrorNotice({ error, fields = [] }: { error: unknown; fields?: string[] }) {
  if (!error) return null;
  const e = error instanceof ApiError ? error : new ApiError(0, String((error as Error)?.message ?? error));
  const rest = unclaimed(e.errors, fields);
  const shown = Object.keys(e.errors).length - Object.keys(rest).length;
  return (
    <Notice kind="error">
      <p>
        {e.message}
        {shown > 0 ? ' (see the marked fields)' : ''}
      </p>
      {Object.keys(rest).length > 0 && (
        <ul>
          {Object.entries(rest).map(([k, list]) => (
            <li key={k}>
              <code>{k}</code>: {list.join('; ')}
            </li>
          ))}
        </ul>
      )}
    </Notice>
  );
}

/** A modal confirmation; Escape or Cancel closes it without acting. `titleId` tells apart two dialogs of one page. */
export function ConfirmDialog(p: {
  open: boolean;
  title: string;
  titleId?: string;
  children: ComponentChildren;
  confirmLabel: string;
  danger?: boolean;
  onConfirm: () => void;
  onCancel: () => void;
}) {
  const ref = useRef<HTMLDialogElement>(null);
  // A layout effect: the <dialog> opens and closes in the same render as the state that drives it.
  // With useEffect (run after paint) a cancelled dialog stayed open for up to a frame, titled from
  // state that was already cleared ("Refresh token undefined?"; seen in Chromium 156.0.8078.108).
  useLayoutEffect(() => {
    const d = ref.current;
    if (!d) return;
    if (p.open && !d.open) d.showModal();
    if (!p.open && d.open) d.close();
  }, [p.open]);
  return (
    <dialog ref={ref} aria-labelledby={p.titleId ?? 'confirm-title'} onClose={() => p.open && p.onCancel()}>
      <h2 id={p.titleId ?? 'confirm-title'}>{p.title}</h2>
      <div class="dialog-body">{p.children}</div>
      <div class="actions">
        <button type="button" class={p.danger ? 'danger' : 'primary'} onClick={p.onConfirm}>
          {p.confirmLabel}
        </button>
        <button type="button" onClick={p.onCancel} autofocus>
          Cancel
        </button>
      </div>
    </dialog>
  );
}

/** Copies `text`; falls back to selecting it in a field when the Clipboard API is unavailable (plain HTTP). */
/** `what` completes the accessible name: “Copy the value of token 3”. */
export function CopyButton({ text, label = 'Copy', what }: { text: string; label?: string; what: string }) {
  const [state, setState] = useState<'' | 'copied' | 'failed'>('');
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(text);
      setState('copied');
    } catch {
      setState('failed');
    }
  };
  return (
    <span class="copy">
      <button type="button" onClick={copy} aria-label={`Copy ${what}`}>
        {label}
      </button>
      <span role="status" class="copy-state">
        {state === 'copied' ? 'Copied' : state === 'failed' ? 'Copy failed: select the text and copy it by hand' : ''}
      </span>
    </span>
  );
}

/** Multi-line list input ↔ array: one entry per line (commas also split), blanks dropped. */
export const toList = (s: string): string[] =>
  s
    .split(/[\n,]/)
    .map((x) => x.trim())
    .filter((x) => x !== '');

export const formatTime = (iso?: string): string => (iso ? `${new Date(iso).toISOString().replace('T', ' ').slice(0, 19)} UTC` : '—');

export const formatNumber = (n: number): string => n.toLocaleString('en-US');

export function formatBytes(n: number): string {
  const units = ['B', 'kB', 'MB', 'GB', 'TB', 'PB'];
  let v = n;
  let i = 0;
  while (v >= 1000 && i < units.length - 1) {
    v /= 1000;
    i++;
  }
  return i === 0 ? `${n} B` : `${v.toFixed(v >= 100 ? 0 : v >= 10 ? 1 : 2)} ${units[i]}`;
}

export function useAsync<T>(load: () => Promise<T>, deps: unknown[]): { data?: T; error?: unknown; loading: boolean; reload: () => void } {
  const [state, setState] = useState<{ data?: T; error?: unknown; loading: boolean }>({ loading: true });
  const [tick, setTick] = useState(0);
  useEffect(() => {
    let live = true;
    setState((s) => ({ ...s, loading: true }));
    load().then(
      (data) => live && setState({ data, loading: false }),
      (error: unknown) => live && setState({ error, loading: false }),
    );
    return () => {
      live = false;
    };
    // `load` is a new closure every render; `deps` says when it asks for something else.
  }, [...deps, tick]);
  return { ...state, reload: () => setTick((t) => t + 1) };
}
