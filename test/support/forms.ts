// Multipart forms for card uploads, and their exact bytes for raw signed requests.

export const cardForm = (
  file: Uint8Array | undefined,
  fields: Record<string, string> = {},
  filename = "card.png",
  type = "image/png"
): FormData => {
  const form = new FormData()
  // A copy over a plain ArrayBuffer: what a Blob takes (the bytes are the same).
  if (file !== undefined) form.append("file", new Blob([new Uint8Array(file)], { type }), filename)
  for (const [k, v] of Object.entries(fields)) form.append(k, v)
  return form
}

export const formBytes = async (form: FormData): Promise<{ body: Uint8Array; contentType: string }> => {
  const response = new Response(form)
  return { body: new Uint8Array(await response.arrayBuffer()), contentType: response.headers.get("content-type")! }
}

let variant = 0
/** A distinct valid image per call: these bytes (a PNG or JPEG) with a few bytes appended after their end. */
export const uniqueImage = (image: Uint8Array): Uint8Array => {
  const tail = new TextEncoder().encode(`variant-${Date.now()}-${variant++}`)
  const out = new Uint8Array(image.length + tail.length)
  out.set(image)
  out.set(tail, image.length)
  return out
}
