// Runs on a worker thread of the pattern-check pool: compiles a batch of stream patterns with RE2
// (a native addon that loads per thread) and answers each one's problem, or null.
import { patternCompileProblem } from '../domain/matchers.js';

export default function compileProblems(patterns: string[]): Array<string | null> {
  return patterns.map(patternCompileProblem);
}
