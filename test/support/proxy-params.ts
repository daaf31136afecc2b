// Readers over the HAProxy params vetting for its tests: the words of a line, and why a backend's or a server's params
// are refused (undefined when they are accepted).
import { vetBackendParams, vetServerParams } from "../../src/proxy/haproxy-params/index";
import { tokenizeLine } from "../../src/proxy/haproxy-params/tokenizer";

/** The words HAProxy would read from the line; throws where the tokeniser refuses it. */
export const words = (line: string) => {
  const result = tokenizeLine(line);
  if (!result.ok) throw new Error(result.error);
  return result.value.words;
};

/** The whole refusal of backend params (field, line, reason), with the installation's extra directives allowed. */
export const refusal = (params: string, extra: string[] = []) => {
  const result = vetBackendParams(params, extra);
  return result.ok ? undefined : result.error;
};

/** The reason backend params are refused. */
export const reason = (params: string, extra: string[] = []) => refusal(params, extra)?.reason;

/** The reason a container link's server params are refused. */
export const serverReason = (params: string) => {
  const result = vetServerParams(params);
  return result.ok ? undefined : result.error.reason;
};
