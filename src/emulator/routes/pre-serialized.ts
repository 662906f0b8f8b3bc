/**
 * A response body already turned into JSON text. Hot paths (the participant
 * search) build their page from cached fragments and hand it over as is.
 */
export class PreSerialized {
  readonly json: string;
  constructor(json: string) {
    this.json = json;
  }
}
