# expect: parse-error line=3
def plan():
	try:
		walk('kitchen')
	except Exception:
		pass
