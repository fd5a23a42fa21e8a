// Scores of a ranking of documents against the documents that answer each question (binary relevance):
// recall@5 (the share of questions with an answering document in the top 5), nDCG@10 (every answering
// document is relevant, gain 1, ideal = all of them first) and MRR@10 (1 / the rank of the first answering
// document, 0 past 10).
import type { Question } from './corpus';

export interface Scores {
  recall5: number;
  ndcg10: number;
  mrr10: number;
  /** The first expected document of each question not answered in the top 5. */
  missed: string[];
}

const discount = (rank: number) => 1 / Math.log2(rank + 1);

export function scoreRankings(rankings: string[][], questions: Question[]): Scores {
  let hits = 0;
  let reciprocal = 0;
  let ndcg = 0;
  const missed: string[] = [];
  rankings.forEach((ranking, i) => {
    const relevant = new Set(questions[i].expected);
    const rank = ranking.findIndex((d) => relevant.has(d)) + 1;
    if (rank >= 1 && rank <= 5) hits++;
    else missed.push(questions[i].expected[0]);
    if (rank >= 1 && rank <= 10) reciprocal += 1 / rank;
    let dcg = 0;
    ranking.slice(0, 10).forEach((d, j) => relevant.has(d) && (dcg += discount(j + 1)));
    let ideal = 0;
    for (let j = 1; j <= Math.min(10, relevant.size); j++) ideal += discount(j);
    ndcg += dcg / ideal;
  });
  const n = questions.length;
  return { recall5: hits / n, ndcg10: ndcg / n, mrr10: reciprocal / n, missed };
}
