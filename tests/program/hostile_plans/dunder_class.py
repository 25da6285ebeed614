# expect: parse-error line=3
def plan():
	().__class__.__bases__[0].__subclasses__()
