// One YAML reader for every file a person writes (scenarios, predictions, a class's lab): an error or a
// warning (an unknown tag like `!j`, a stray `%` directive) is a TermlabError naming the file and line,
// never a Node warning on stderr beside a value silently read as something else.
import { type Document, LineCounter, parseAllDocuments, parseDocument } from 'yaml';
import { type ErrorCode, TermlabError } from './errors.ts';

export interface YamlText {
  doc: Document;
  lineCounter: LineCounter;
  data: unknown;
}

export function parseYamlText(text: string, source: string, code: ErrorCode): YamlText {
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, prettyErrors: false });
  const problem = doc.errors[0] ?? doc.warnings[0];
  if (problem) {
    const line = problem.pos ? `line ${lineCounter.linePos(problem.pos[0]).line}: ` : '';
    throw new TermlabError(code, `${source}: not valid YAML: ${line}${problem.message.split('\n')[0]}`, { source });
  }
  try {
    return { doc, lineCounter, data: doc.toJS() };
  } catch (error) {
    // e.g. an alias expanded past yaml's limit (a "billion laughs" file)
    throw new TermlabError(code, `${source}: not valid YAML: ${(error as Error).message.split('\n')[0]}`, { source });
  }
}

/** A file of several documents (`---`), as `kubectl create -f` reads one: each with the line it starts on; empty ones skipped. */
export function parseYamlDocuments(text: string, source: string, code: ErrorCode): { data: unknown; line: number }[] {
  const lineCounter = new LineCounter();
  const docs = parseAllDocuments(text, { lineCounter, prettyErrors: false });
  if (!Array.isArray(docs)) return [];
  return docs.flatMap((doc) => {
    const problem = doc.errors[0] ?? doc.warnings[0];
    if (problem) {
      const line = problem.pos ? `line ${lineCounter.linePos(problem.pos[0]).line}: ` : '';
      throw new TermlabError(code, `${source}: not valid YAML: ${line}${problem.message.split('\n')[0]}`, { source });
    }
    let data: unknown;
    try {
      data = doc.toJS();
    } catch (error) {
      throw new TermlabError(code, `${source}: not valid YAML: ${(error as Error).message.split('\n')[0]}`, { source });
    }
    // Its content's line, not its `---` marker's.
    const start = (doc.contents as { range?: [number, number, number] } | null)?.range?.[0] ?? doc.range[0];
    return data === null || data === undefined ? [] : [{ data, line: lineCounter.linePos(start).line }];
  });
}
