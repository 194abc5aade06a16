/** Options of the init generator; kept equal to schema.json (a test compares them). */
export interface InitGeneratorSchema {
  skipFormat?: boolean;
}
