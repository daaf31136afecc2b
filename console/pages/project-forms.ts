// The forms that create and change a project's backends, containers and domains, each through the dry-run-then-apply
// flow (change.ts) with the project's ETag in If-Match.
import { useState } from "preact/hooks";
import type { Answer } from "../api";
import { ChangeOutcome, useChange } from "../change";
import { Field, html } from "../ui";

/** A project as GET /projects/{label} answers it, with the fields the console reads. */
export type Project = { label: string; fullname?: string; backends: any[]; containers: any[]; version: number };

type FormProps = {
  project: Project;
  etag: string | null;
  onApplied: (answer: Answer) => void;
  onReload: () => void;
};

/** `<container id> <server options>` per line, as the backend's backendContainers. */
function parseContainers(text: string) {
  return text
    .split("\n")
    .map((line) => line.trim())
    .filter(Boolean)
    .map((line) => {
      const [id, ...options] = line.split(/\s+/);
      return { containerId: Number(id), ...(options.length > 0 && { params: options.join(" ") }) };
    });
}

const containerLines = (backend: any) =>
  (backend?.backendContainers ?? [])
    .map((link: any) => `${link.containerId}${link.params ? ` ${link.params}` : ""}`)
    .join("\n");

/** Answers for the backend form's fields; a refusal of any container's options lands on the containers field. */
function backendBody(values: Record<string, string>) {
  return {
    label: values.label,
    ...(values.fullname && { fullname: values.fullname }),
    ...(values.port && { port: Number(values.port) }),
    params: values.params,
    backendContainers: parseContainers(values.containers),
  };
}

/** One labelled field of a form: its API name, label, and how it is typed. */
type FieldSpec = { id: string; label: string; hint?: string; type?: string; multiline?: boolean; required?: boolean };

const BACKEND_FIELDS: FieldSpec[] = [
  { id: "label", label: "Label", hint: "2 to 32 lowercase letters and digits", required: true },
  { id: "fullname", label: "Full name" },
  { id: "port", label: "Port of the containers", type: "number", hint: "80 when left empty" },
  {
    id: "params",
    label: "HAProxy options (params)",
    multiline: true,
    hint: "One directive per line, from the allowed list (docs/security.md)",
  },
  {
    id: "containers",
    label: "Containers",
    multiline: true,
    hint: "One per line: the container's number, then its server options, e.g. 1 check inter 2s",
  },
];

/** The fields of `specs`, each with its value and the refusal that names it. */
function fields(specs: FieldSpec[], values: Record<string, string>, set: Setter, flow: Flow, prefix = "") {
  return specs.map(
    (spec) =>
      html`<${Field}
        ...${spec}
        id=${`${prefix}${spec.id}`}
        value=${values[spec.id]}
        onInput=${set(spec.id)}
        error=${flow.fieldError(spec.id)}
      />`,
  );
}

type Setter = (name: string) => (value: string) => void;
type Flow = ReturnType<typeof useChange>;

const EMPTY_BACKEND = { label: "", fullname: "", port: "", params: "", containers: "" };

/** The form's values for a stored backend, or an empty form. */
const backendValues = (backend: any): Record<string, string> =>
  backend
    ? {
        label: backend.label,
        fullname: backend.fullname ?? "",
        port: String(backend.port),
        params: backend.params ?? "",
        containers: containerLines(backend),
      }
    : EMPTY_BACKEND;

/** A stored backend in the shape the form sends, for the dry run's "before". */
const backendBefore = (backend: any) =>
  backend && {
    label: backend.label,
    ...(backend.fullname && { fullname: backend.fullname }),
    port: backend.port,
    params: backend.params ?? "",
    backendContainers: backend.backendContainers.map((link: any) => ({
      containerId: link.containerId,
      ...(link.params && { params: link.params }),
    })),
  };

export function BackendForm({ project, etag, onApplied, onReload }: FormProps) {
  const [values, setValues] = useState<Record<string, string>>(EMPTY_BACKEND);
  const flow = useChange(onApplied, (field) => (field.startsWith("backendContainers") ? "containers" : field));
  const set = (name: string) => (value: string) => (setValues({ ...values, [name]: value }), flow.reset());
  const choose = (event: Event) => {
    const label = (event.target as HTMLSelectElement).value;
    setValues(backendValues(project.backends.find((backend) => backend.label === label)));
    flow.reset();
  };
  const submit = (event: Event) => {
    event.preventDefault();
    const path = `/backends/${encodeURIComponent(project.label)}`;
    flow.check({ method: "POST", path, body: backendBody(values), etag });
  };
  return html`<form class="change" aria-labelledby="backend-form-title" onSubmit=${submit}>
    <h3 id="backend-form-title">Create or change a backend</h3>
    <div class="field">
      <label for="backend-choice">Backend</label>
      <select id="backend-choice" onChange=${choose}>
        <option value="">A new backend</option>
        ${project.backends.map((backend) => html`<option value=${backend.label}>${backend.label}</option>`)}
      </select>
    </div>
    ${fields(BACKEND_FIELDS, values, set, flow)}
    <button type="submit">Check this change (dry run)</button>
    <${ChangeOutcome}
      flow=${flow}
      before=${backendBefore(project.backends.find((backend) => backend.label === values.label))}
      what=${`backend ${values.label}`}
      fields=${BACKEND_FIELDS.map((spec) => spec.id)}
      onReload=${onReload}
    />
  </form>`;
}

const CONTAINER_FIELDS: FieldSpec[] = [
  { id: "label", label: "Label", hint: "an existing label changes that container", required: true },
  { id: "fullname", label: "Full name" },
  { id: "hostname", label: "Host name", hint: "the host it runs on, as the operator registered it" },
  { id: "ipv6", label: "IPv6 address", hint: "its own address, used by no other container or host" },
];

export function ContainerForm({ project, etag, onApplied, onReload }: FormProps) {
  const [values, setValues] = useState<Record<string, string>>({ label: "", fullname: "", hostname: "", ipv6: "" });
  const flow = useChange(onApplied);
  const set = (name: string) => (value: string) => (setValues({ ...values, [name]: value }), flow.reset());
  const existing = project.containers.find((container) => container.label === values.label);
  const before = existing && {
    label: existing.label,
    fullname: existing.fullname,
    hostname: existing.host?.hostname,
    ipv6: existing.ipv6,
  };
  const submit = (event: Event) => {
    event.preventDefault();
    const body = Object.fromEntries(Object.entries(values).filter(([, value]) => value !== ""));
    flow.check({ method: "POST", path: `/containers/${encodeURIComponent(project.label)}`, body, etag });
  };
  return html`<form class="change" aria-labelledby="container-form-title" onSubmit=${submit}>
    <h3 id="container-form-title">Create or change a container</h3>
    ${fields(CONTAINER_FIELDS, values, set, flow, "container-")}
    <button type="submit">Check this change (dry run)</button>
    <${ChangeOutcome}
      flow=${flow}
      before=${before}
      what=${`container ${values.label}`}
      fields=${CONTAINER_FIELDS.map((spec) => spec.id)}
      onReload=${onReload}
    />
  </form>`;
}

const DOMAIN_FIELDS: FieldSpec[] = [
  { id: "domainName", label: "Domain name", required: true },
  {
    id: "redirectToUrl",
    label: "Redirect to (optional)",
    hint: "an http or https address; a trailing * keeps the path",
  },
];

/** A labelled choice among `options` ([value, text] pairs). */
function Choice(props: {
  id: string;
  label: string;
  value: string;
  options: string[][];
  onChange: (v: string) => void;
}) {
  const change = (event: Event) => props.onChange((event.target as HTMLSelectElement).value);
  return html`<div class="field">
    <label for=${props.id}>${props.label}</label>
    <select id=${props.id} value=${props.value} onChange=${change}>
      ${props.options.map(([value, text]) => html`<option value=${value}>${text}</option>`)}
    </select>
  </div>`;
}

type DomainFields = { domainName: string; backendLabel: string; redirectToUrl?: string | null };

/** A domain as the dry run compares it, stored or asked for. */
const domainShape = (domain: DomainFields) => ({
  domainName: domain.domainName,
  backendLabel: domain.backendLabel,
  ...(domain.redirectToUrl && { redirectToUrl: domain.redirectToUrl }),
});

/** The project's domain of that name; names are case-insensitive, so it is found whatever case was typed. */
const storedDomain = (project: Project, name: string): DomainFields | undefined =>
  project.backends
    .flatMap((backend) => backend.domainForwardings)
    .find((domain) => domain.domainName.toLowerCase() === name.trim().toLowerCase());

export function DomainForm({ project, etag, onApplied, onReload }: FormProps) {
  const [values, setValues] = useState<Record<string, string>>({
    operation: "CREATE",
    domainName: "",
    backendLabel: "",
    redirectToUrl: "",
  });
  const flow = useChange(onApplied);
  const set = (name: string) => (value: string) => (setValues({ ...values, [name]: value }), flow.reset());
  // The first backend until one is chosen: the list may have been empty when the form opened.
  const backendLabel = values.backendLabel || (project.backends[0]?.label ?? "");
  const submit = (event: Event) => {
    event.preventDefault();
    const { redirectToUrl, ...rest } = values;
    const operation = { ...rest, backendLabel, projectLabel: project.label, ...(redirectToUrl && { redirectToUrl }) };
    flow.check({ method: "POST", path: "/domains/massupdate", body: { domainOperations: [operation] }, etag });
  };
  const backends = project.backends.map((backend) => [backend.label, backend.label]);
  const stored = storedDomain(project, values.domainName);
  const after =
    values.operation === "DELETE"
      ? null
      : domainShape({ domainName: values.domainName, backendLabel, redirectToUrl: values.redirectToUrl });
  const operations = [
    ["CREATE", "Add or change"],
    ["DELETE", "Remove"],
  ];
  return html`<form class="change" aria-labelledby="domain-form-title" onSubmit=${submit}>
    <h3 id="domain-form-title">Add, change or remove a domain</h3>
    <${Choice}
      id="domain-operation"
      label="What to do"
      value=${values.operation}
      options=${operations}
      onChange=${set("operation")}
    />
    ${fields(DOMAIN_FIELDS.slice(0, 1), values, set, flow)}
    <${Choice}
      id="domain-backend"
      label="Backend it goes to"
      value=${backendLabel}
      options=${backends}
      onChange=${set("backendLabel")}
    />
    ${fields(DOMAIN_FIELDS.slice(1), values, set, flow)}
    <button type="submit">Check this change (dry run)</button>
    <${ChangeOutcome}
      flow=${flow}
      before=${stored && domainShape(stored)}
      after=${after}
      what=${`domain ${values.domainName}`}
      fields=${DOMAIN_FIELDS.map((spec) => spec.id)}
      onReload=${onReload}
    />
  </form>`;
}
