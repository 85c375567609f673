/** A workspace's address as typed in the dialogs that make one: the slug after the organisation's, in the form the server takes. */
export function AddressField(props: { value: string; onInput: (value: string) => void }) {
  return (
    <label class="field">
      <span>Address</span>
      <div class="input-prefix">
        <span>/</span>
        <input name="slug" required pattern="[a-z0-9]+(-[a-z0-9]+)*" value={props.value} onInput={(e) => props.onInput((e.target as HTMLInputElement).value)} />
      </div>
    </label>
  );
}
