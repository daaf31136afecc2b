// PULLMETRICS_MAPPER_YAML (or the reference's PROMETHEUS_MAPPER_YAML) read into a mapping: the name of a file under
// config/, bundled with the Worker, or the YAML itself. No Workers import, so npm start's settings check runs it too.
import { invalidSetting } from "../../shared/settings";
import { bundledConfigFiles } from "../config/bundled.gen";
import { parseMapperConfig, type MapperConfig } from "./mapper";

/** The mapping the variable gives; a mapping that does not parse is a SettingsError naming the variable. */
export function mapperOfSetting({ variable, value }: { variable: string; value: string }): MapperConfig {
  const path = value.trim().replace(/^(\.\/)?config\//, "");
  const text = bundledConfigFiles[path] ?? value;
  try {
    return parseMapperConfig(text);
  } catch (error) {
    throw invalidSetting("ratelimit", variable, error instanceof Error ? error.message : String(error));
  }
}
