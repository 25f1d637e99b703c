/**
 * The file name of `source` without folders and without its extension: a fallback conversation id.
 *
 * @example
 * sourceStem("runs/pydicom-1458.traj"); // "pydicom-1458"
 */
export function sourceStem(source: string): string {
  const name = source.split(/[\\/]/).at(-1) ?? source;
  const dot = name.lastIndexOf(".");
  return dot > 0 ? name.slice(0, dot) : name;
}
