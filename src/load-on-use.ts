/**
 * `load` run by the first call and its promise shared by the calls after it; a load that failed
 * (a broken install, no file descriptors left) is run again by the next call rather than kept.
 * For the libraries the service loads when first used, not at every start.
 */
export function loadedOnFirstUse<T>(load: () => Promise<T>): () => Promise<T> {
  let loading: Promise<T> | null = null;
  return () => {
    if (!loading) {
      loading = load();
      loading.catch(() => (loading = null));
    }
    return loading;
  };
}
