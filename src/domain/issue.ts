// One validation issue as a client sees it (DECISIONS §1: `data.issues[]`). Its own module, so that
// the text rules and the schema-issue formatter can both use it without importing each other.
export interface Issue {
  readonly path: string
  readonly message: string
}
