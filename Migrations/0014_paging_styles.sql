-- More ways to page a json source (next_page: 'offset', 'page', 'last-key', 'header:NAME'
-- beside 'link' and a body path): the first page's number for 'page', and the path of the
-- boolean that says more pages follow for 'last-key' (Stripe's $.has_more).
ALTER TABLE sources ADD COLUMN first_page INTEGER CHECK (first_page >= 0);
ALTER TABLE sources ADD COLUMN has_more TEXT;
