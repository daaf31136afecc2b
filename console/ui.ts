// Shared pieces of the console's pages: the htm binding, labelled fields with their refusal beside them, answers'
// warnings, loading a request's answer into a page, and the boundary that keeps a failing page from blanking the rest.
import { h, type ComponentChildren } from "preact";
import { useCallback, useEffect, useErrorBoundary, useRef, useState } from "preact/hooks";
import htm from "htm";
import { NO_ANSWER, reasonOf, type Answer } from "./api";

export const html = htm.bind(h);

type FieldProps = {
  id: string;
  label: string;
  value: string;
  onInput: (value: string) => void;
  error?: string;
  hint?: string;
  multiline?: boolean;
  type?: string;
  required?: boolean;
};

/** A labelled input; a refusal naming this field is shown right beside it and announced with it. */
export function Field({ id, label, value, onInput, error, hint, multiline, type = "text", required }: FieldProps) {
  const described = [hint ? `${id}-hint` : "", error ? `${id}-error` : ""].filter(Boolean).join(" ") || undefined;
  const input = (event: Event) => onInput((event.target as HTMLInputElement).value);
  const common = { id, name: id, value, onInput: input, "aria-describedby": described, "aria-invalid": !!error };
  return html`<div class="field">
    <label for=${id}>${label}</label>
    ${
      multiline
        ? html`<textarea ...${common} rows="4"></textarea>`
        : html`<input ...${common} type=${type} required=${required} autocomplete="off" />`
    }
    ${hint && html`<small id=${`${id}-hint`}>${hint}</small>`}
    ${error && html`<p class="refusal" id=${`${id}-error`} role="alert">Refused: ${error}</p>`}
  </div>`;
}

export function Warnings({ warnings }: { warnings?: string[] }) {
  if (!warnings?.length) return null;
  return html`<ul class="warnings" aria-label="Warnings">
    ${warnings.map((warning) => html`<li>${warning}</li>`)}
  </ul>`;
}

export function Problem({ children }: { children: ComponentChildren }) {
  return html`<p class="problem" role="alert">${children}</p>`;
}

/**
 * Shows what it holds, or, when rendering it threw (an answer of a shape the page did not expect), says so with a way
 * to try again, instead of leaving the whole console blank. The navigation stays usable outside it.
 */
export function PageBoundary({ children }: { children: ComponentChildren }) {
  const [error, retry] = useErrorBoundary((caught) => console.error(caught));
  if (!error) return html`${children}`;
  return html`<${Problem}>
    This page could not be shown: an answer from the server was not what the console expects.
    <button type="button" onClick=${retry}>Try again</button>
  <//>`;
}

/** Loads `request`'s answer when a dependency changes; `reload` asks again. */
export function useAnswer(request: () => Promise<Answer>, deps: unknown[]) {
  const [answer, setAnswer] = useState<Answer | undefined>(undefined);
  const [tick, setTick] = useState(0);
  useEffect(() => {
    let live = true;
    request()
      .then((value) => live && setAnswer(value))
      .catch((error) => {
        console.error(error);
        if (live) setAnswer({ ...NO_ANSWER, text: "The console could not read the server's answer." });
      });
    return () => {
      live = false;
    };
  }, [...deps, tick]);
  const reload = useCallback(() => setTick((value) => value + 1), []);
  return { answer, reload };
}

/** Whether the keyboard focus went with an element that was removed (it then falls back to the page's body). */
export const focusLost = () => !document.activeElement || document.activeElement === document.body;

/** Runs one action at a time: a call while one is out (a double click on a write) is ignored, not sent again. */
export function useOneAtATime() {
  const inFlight = useRef(false);
  const [busy, setBusy] = useState(false);
  const run = async (action: () => Promise<void>) => {
    if (inFlight.current) return;
    inFlight.current = true;
    setBusy(true);
    try {
      await action();
    } finally {
      inFlight.current = false;
      setBusy(false);
    }
  };
  return { busy, run };
}

/** What a failed request says to the reader: the server's refusal, or that no answer came. */
export const failureOf = (answer: Answer) =>
  answer.status === NO_ANSWER.status
    ? answer.text
    : `The server refused: ${reasonOf(answer)} (status ${answer.status})`;

/** What a failed write says: the refusal, or that no answer came, so the write may or may not be stored. */
export const refusalOf = (answer: Answer) =>
  answer.status === NO_ANSWER.status
    ? `${answer.text} The change may or may not be stored: reload to see.`
    : `Refused: ${reasonOf(answer)}`;

/** What a page shows until the answer came, or when it is an error. */
export function pending(answer: Answer | undefined) {
  if (!answer) return html`<p>Loading…</p>`;
  if (!answer.ok) return html`<${Problem}>${failureOf(answer)}<//>`;
  return null;
}

/** An ISO time as the reader's local date and time. */
export const when = (iso?: string | null) => (iso ? new Date(iso).toLocaleString() : "—");
