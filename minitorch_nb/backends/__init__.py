"Array backends: device 'cpu' (backends.cpu, chapter 06a) and device 'cuda' (backends.cuda, chapter 06c); importing a module registers its device."
