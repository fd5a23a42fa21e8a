// The models a local embedding server serves, by name: every configured folder that holds a model
// (LOCAL_EMBEDDING_MODEL_DIR), each loaded on its first request and kept, so a model no knowledge base uses
// costs no memory. The first is loaded at start: it is the default of new knowledge bases, and a server
// whose default cannot load should fail at start rather than at its first query.
import fs from 'node:fs';
import path from 'node:path';
import { LocalEmbeddingModel, modelNameOf, type LocalModelOptions } from './local-model';

export class LocalModels {
  private readonly dirs = new Map<string, string>();
  private readonly loaded = new Map<string, Promise<LocalEmbeddingModel>>();

  private constructor(private readonly options: LocalModelOptions) {}

  /** The models of `dirs` that are present (a folder without model.onnx is skipped; none present is an error). */
  static async open(dirs: string[], options: LocalModelOptions): Promise<LocalModels> {
    const models = new LocalModels(options);
    for (const dir of dirs) {
      if (fs.existsSync(path.join(dir, 'model.onnx')) && !models.dirs.has(modelNameOf(dir)))
        models.dirs.set(modelNameOf(dir), dir);
    }
    if (!models.dirs.size)
      throw new Error(`no embedding model in ${dirs.join(', ')} (tools/obtain-embedding-model.sh)`);
    await models.get(models.names[0]);
    return models;
  }

  /** Names of the models served, the default first. */
  get names(): string[] {
    return [...this.dirs.keys()];
  }

  has(name: string): boolean {
    return this.dirs.has(name);
  }

  /** The model `name` (one of names), loaded once. */
  get(name: string): Promise<LocalEmbeddingModel> {
    const dir = this.dirs.get(name);
    if (!dir) throw new Error(`no local embedding model ${name}`);
    let model = this.loaded.get(name);
    if (!model) {
      model = LocalEmbeddingModel.load(dir, this.options);
      this.loaded.set(name, model);
      // A load that failed is tried again by the next request.
      model.catch(() => this.loaded.delete(name));
    }
    return model;
  }

  async close(): Promise<void> {
    for (const model of this.loaded.values()) await (await model.catch(() => undefined))?.close();
  }
}
