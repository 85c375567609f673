export type Schema = Record<string, any>;

/** The schema a `$ref` of `document` (an OpenAPI document) names, followed to the end; other schemas as they are. */
export function resolveSchema(document: Schema, schema: Schema | undefined): Schema {
  let current = schema ?? {};
  while (current.$ref) current = current.$ref.replace(/^#\//, '').split('/').reduce((node: Schema, key: string) => node[key], document);
  return current;
}
