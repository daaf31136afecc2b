// Every change the console makes goes the same way: the API's dry run first ("this is what will change"), then the
// write with If-Match. A refusal is put beside the field it names; a 412 shows what changed meanwhile, with a reload.
import { useEffect, useRef, useState } from "preact/hooks";
import { proxyApi, reasonOf, type Answer } from "./api";
import { DiffView, diffLines, withContext } from "./diff";
import { Problem, Warnings, focusLost, html, refusalOf, useOneAtATime } from "./ui";

/** The field a refusal names (`params line 2: …`, `backendContainers[0].params line 1: …`, `port: …`), and why. */
export function refusalField(message: string): { field: string; reason: string } | undefined {
  const named = /^([A-Za-z][\w.[\]]*?)(?: line \d+)?: (.+)$/s.exec(message);
  if (named) return { field: named[1], reason: message };
  if (/\baddress\b.*\bused by\b/.test(message)) return { field: "ipv6", reason: message };
  if (/\bdomain\b/.test(message)) return { field: "domainName", reason: message };
  return undefined;
}

export type ChangeRequest = { method: string; path: string; body: unknown; etag?: string | null };

type State =
  | { step: "editing" }
  | { step: "checked"; answer: Answer; request: ChangeRequest }
  | { step: "conflict"; current: string | null }
  | { step: "done"; answer: Answer }
  | { step: "refused"; answer: Answer };

const withQuery = (path: string) => `${path}${path.includes("?") ? "&" : "?"}dryRun=true`;

/** The dry-run-then-apply flow of one form: `check` sends the dry run, `apply` the write. */
export function useChange(onApplied: (answer: Answer) => void, alias: (field: string) => string = (field) => field) {
  const [state, setState] = useState<State>({ step: "editing" });
  const send = (request: ChangeRequest, dryRun: boolean) =>
    proxyApi(request.method, dryRun ? withQuery(request.path) : request.path, {
      body: request.body,
      headers: request.etag ? { "If-Match": request.etag } : {},
    });
  const settle = (answer: Answer, request: ChangeRequest, dryRun: boolean) => {
    if (answer.status === 412) setState({ step: "conflict", current: answer.etag });
    else if (!answer.ok) setState({ step: "refused", answer });
    else if (dryRun) setState({ step: "checked", answer, request });
    else {
      setState({ step: "done", answer });
      onApplied(answer);
    }
  };
  const { busy, run } = useOneAtATime();
  const once = (request: ChangeRequest, dryRun: boolean) =>
    run(async () => settle(await send(request, dryRun), request, dryRun));
  const check = (request: ChangeRequest) => once(request, true);
  const apply = async () => {
    if (state.step === "checked") await once(state.request, false);
  };
  const reset = () => setState({ step: "editing" });
  const named = state.step === "refused" ? refusalField(reasonOf(state.answer)) : undefined;
  const refusal = named && { ...named, field: alias(named.field) };
  const fieldError = (field: string) => (refusal?.field === field ? refusal.reason : undefined);
  return { state, busy, check, apply, reset, fieldError, refusedField: refusal?.field };
}

type Flow = ReturnType<typeof useChange>;

/** What the flow has to say under a form: the dry run's verdict with Apply, the refusal, the conflict, the result. */
type OutcomeProps = {
  flow: Flow;
  /** The item as stored, in the shape of `after`; undefined when there is none. */
  before: unknown;
  /** The item as the change leaves it, when not the request's body; null when the change removes it. */
  after?: unknown;
  what: string;
  fields: string[];
  onReload: () => void;
};

const asText = (value: unknown) => (value === undefined || value === null ? "" : JSON.stringify(value, null, 2));

/**
 * The outcome under a form, in a box that takes the focus when the button that had it went with the step (Apply,
 * Reload), and a status line that exists before its text, so that screen readers announce each change of it.
 */
export function ChangeOutcome(props: OutcomeProps) {
  const { state } = props.flow;
  const box = useRef<HTMLDivElement>(null);
  const mounted = useRef(false);
  useEffect(() => {
    if (!mounted.current) return void (mounted.current = true);
    if (!focusLost()) return;
    const form = box.current?.closest("form");
    if (state.step === "editing") form?.querySelector<HTMLElement>("input, select, textarea")?.focus();
    else box.current?.focus();
  }, [state.step]);
  return html`<div class="outcome" tabindex="-1" ref=${box}>
    <p role="status" class="visually-hidden">${announcement(state, props.what)}</p>
    <${OutcomeBody} ...${props} />
  </div>`;
}

/** What the status line says of a step; refusals and conflicts are alerts of their own. */
function announcement(state: State, what: string): string {
  if (state.step === "checked") return `Dry run: the server would accept ${what}. Apply it to store it.`;
  if (state.step === "done") return `Applied: ${what} is stored.`;
  return "";
}

function OutcomeBody({ flow, before, after, what, fields, onReload }: OutcomeProps) {
  const { state } = flow;
  if (state.step === "checked") {
    const result = after === undefined ? state.request.body : after;
    const lines = withContext(diffLines(asText(before), asText(result)));
    const novelty = result === null ? " It is removed." : before === undefined ? " It is new." : "";
    return html`<section class="dry-run" aria-label="Dry run">
      <h3>Dry run: this is what will change</h3>
      <p>The server checked ${what} and would accept it. Nothing is stored until you apply it.${novelty}</p>
      <${DiffView} lines=${lines} caption=${what} />
      <${Warnings} warnings=${state.answer.body?.warnings} />
      <button type="button" onClick=${flow.apply} aria-disabled=${flow.busy ? "true" : undefined}>
        ${flow.busy ? "Applying…" : "Apply"}
      </button>
      <button type="button" onClick=${flow.reset}>Change it again</button>
    </section>`;
  }
  if (state.step === "conflict")
    return html`<section class="conflict" role="alert" aria-label="Conflict">
      <h3>Someone changed this project meanwhile</h3>
      <p>
        Nothing was stored: the project is no longer as you loaded it. Reload to see what changed, then make your change
        again.
      </p>
      <button type="button" onClick=${() => (flow.reset(), onReload())}>Reload the project</button>
    </section>`;
  if (state.step === "refused") {
    const field = flow.refusedField;
    if (field && fields.includes(field))
      return html`<p class="problem">The change was refused: see the field marked above.</p>`;
    return html`<${Problem}>${refusalOf(state.answer)}<//>`;
  }
  if (state.step === "done")
    return html`<section class="applied">
      <p>
        Applied: ${what} is
        stored${state.answer.body?.payload?.key ? ` (its number, ${state.answer.body.payload.key}: ${state.answer.body.payload.value})` : ""}.
      </p>
      <${Warnings} warnings=${state.answer.body?.warnings} />
    </section>`;
  return null;
}
