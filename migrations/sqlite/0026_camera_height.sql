-- How high above its floor each panorama's camera was, in metres, when its capture said
-- (`position.height`); NULL: the server's `panoramaHeightMetres`. An upload keeps it until its
-- panorama is made.
ALTER TABLE panoramas ADD COLUMN camera_height REAL;
ALTER TABLE uploads ADD COLUMN camera_height REAL;
