export function NotFoundView() {
  return (
    <section>
      <h1>Not found</h1>
      <p>
        Nothing here. <a href="/ui/">Back to the sites</a>.
      </p>
    </section>
  );
}
