-- Only bracketed citations ([@key], [@a; @b], [-@key]) are citations in this book. A bare @name in the text
-- (a decorator such as @patch, a handle) stays as it was written instead of becoming "(name?)".
-- Only the body is walked: the metadata's `nocite: '@*'` (the References page) must stay a citation.
function Pandoc(doc)
  doc.blocks = doc.blocks:walk({
    Cite = function(c)
      for _, cit in ipairs(c.citations) do
        if cit.mode == "AuthorInText" then return c.content end
      end
    end
  })
  return doc
end
