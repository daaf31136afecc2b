// Types of the Prometheus text parser the tests check /metrics with (the package ships none).
declare module "parse-prometheus-text-format" {
  export default function parsePrometheusTextFormat(text: string): unknown[];
}
