// Vite's ?raw imports: the recorded publisher responses under test/news/fixtures/ as text.
declare module "*?raw" {
  const text: string;
  export default text;
}
