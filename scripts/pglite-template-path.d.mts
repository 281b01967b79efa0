export function pgliteTemplateFile(): Promise<string>;
